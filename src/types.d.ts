declare module '*.css' {
  const text: string
  export default text
}
// Migrations are embedded as text so the compiled binary needs no files beside it.
declare module '*.sql' {
  const text: string
  export default text
}
