// The suite runs Elysia in production mode, as the shipped binary does (src/boot.ts): Elysia
// reads NODE_ENV once, when it loads, and its development mode builds validation messages that
// the binary never builds.
process.env.NODE_ENV = 'production'
