/** The logging the services use: a pino logger (the request's `req.log` in a request), or console. */
export interface Logger {
  info(...args: any[]): void;
  warn(...args: any[]): void;
  error(...args: any[]): void;
}
