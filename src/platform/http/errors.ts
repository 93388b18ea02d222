/** The error vocabulary of spec part 7 plus the codes DESIGN.md §4 adds. */
export const ERROR_STATUS = {
  AUTH_REQUIRED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  VALIDATION_ERROR: 400,
  TENANT_MISMATCH: 403,
  ENROLLMENT_REQUIRED: 403,
  ALREADY_ENROLLED: 409,
  COURSE_FULL: 409,
  ATTEMPT_LIMIT: 409,
  LESSON_LOCKED: 403,
  FEE_OVERDUE: 402,
  INTERNAL_ERROR: 500,
  RATE_LIMITED: 429,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SERVICE_UNAVAILABLE: 503,
  BAD_GATEWAY: 502,
  METHOD_NOT_ALLOWED: 405,
  PRECONDITION_FAILED: 412,
  REQUEST_TIMEOUT: 408,
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export class AppError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    status?: number,
  ) {
    super(message);
    this.name = 'AppError';
    this.status = status ?? ERROR_STATUS[code];
  }
}

export const notFound = (what = 'Resource') => new AppError('NOT_FOUND', `${what} not found`);
export const forbidden = (message = 'You do not have permission to do this') => new AppError('FORBIDDEN', message);
export const validationError = (message: string, fields?: Array<{ field: string; message: string }>) => new AppError('VALIDATION_ERROR', message, fields ? { fields } : undefined);
export const conflict = (message: string, details?: Record<string, unknown>) => new AppError('CONFLICT', message, details);
