/**
 * Errors that cross layers carry a status so the HTTP layer can answer without
 * knowing which layer threw. The kernel itself knows nothing of HTTP: a status is
 * just a number attached to an error.
 */

/** One element of an envelope's `errors` array (decisions.md: "Error element shape"). */
export interface ErrorElement {
  message: string;
  meta?: { field?: string; rule?: string; [key: string]: unknown };
}

export class AppError extends Error {
  readonly status: number;
  readonly errors: ErrorElement[];

  constructor(status: number, message: string, errors?: ErrorElement[]) {
    super(message);
    this.name = 'AppError';
    this.status = status;
    this.errors = errors && errors.length > 0 ? errors : [{ message }];
  }
}

/** 400: the request itself is malformed (bad JSON, bad parameter, bad key). */
export class BadRequestError extends AppError {
  constructor(message: string, meta?: ErrorElement['meta']) {
    super(400, message, [meta ? { message, meta } : { message }]);
    this.name = 'BadRequestError';
  }
}

/** 404: an unknown stream or entry. */
export class NotFoundError extends AppError {
  constructor(message: string) {
    super(404, message);
    this.name = 'NotFoundError';
  }
}

/** 409: validation failed; one element per failed rule. */
export class ValidationError extends AppError {
  constructor(errors: ErrorElement[]) {
    super(409, errors[0]?.message ?? 'The given data was invalid.', errors);
    this.name = 'ValidationError';
  }
}

/**
 * A configuration or definition problem found at boot. `file` and `path` (a JSON
 * pointer-ish path such as `/fields/2/type`) name exactly where, so an operator can fix it.
 */
export class ConfigError extends Error {
  readonly file?: string;
  readonly path?: string;

  constructor(message: string, file?: string, path?: string) {
    const where = [file, path ? `at ${path}` : undefined].filter(Boolean).join(' ');
    super(where ? `${where}: ${message}` : message);
    this.name = 'ConfigError';
    this.file = file;
    this.path = path;
  }
}

export function isAppError(error: unknown): error is AppError {
  return error instanceof AppError;
}
