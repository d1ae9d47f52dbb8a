declare module '*.css' {
  const text: string
  export default text
}
// Migrations are embedded as text so the compiled binary needs no files beside it.
declare module '*.sql' {
  const text: string
  export default text
}

// Browser scripts the server sends as they are (imported `with { type: 'text' }`).
declare module '*.js' {
  const text: string
  export default text
}

// The favicon, served as it is.
declare module '*.svg' {
  const text: string
  export default text
}
