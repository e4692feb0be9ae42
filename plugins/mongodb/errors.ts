import {
  MongoNetworkError,
  MongoNotConnectedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  MongoWriteConcernError,
} from 'mongodb';
import { AppError, ValidationError } from '../../kernel/index.js';
import { DatabaseUnavailableError } from './connections.js';

const DUPLICATE_KEY = 11000;
/** The server aborted an operation at its `maxTimeMS`. */
const MAX_TIME_EXPIRED = 50;

/** The field a duplicate-key error is about (`keyValue`/`keyPattern`, else the index name). */
function duplicateField(error: MongoServerError, keyName: string): string {
  const keyValue = (error.keyValue ?? error.keyPattern) as Record<string, unknown> | undefined;
  const first = keyValue ? Object.keys(keyValue)[0] : undefined;
  if (first) return first === '_id' ? keyName : first;
  const match = /index: (?:unique_)?([A-Za-z0-9_.]+)/.exec(error.message);
  return match?.[1] === '_id_' ? keyName : (match?.[1] ?? keyName);
}

export function isDuplicateKey(error: unknown): error is MongoServerError {
  return error instanceof MongoServerError && error.code === DUPLICATE_KEY;
}

/**
 * Driver errors to the product's errors: a duplicate on a unique index is a 409 (the
 * same element shape the `unique` rule produces), an unreachable server a 503 (nothing
 * changed, retry later). Anything else is a bug or an operator problem: 500, logged.
 */
export function mapMongoError(error: unknown, connection: string, keyName: string): unknown {
  if (error instanceof AppError) return error;
  if (isDuplicateKey(error)) {
    const field = duplicateField(error, keyName);
    return new ValidationError([{ message: `The ${field.replace(/_/g, ' ')} has already been taken.`, meta: { field, rule: 'unique' } }]);
  }
  if (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError
  ) {
    return new DatabaseUnavailableError(connection);
  }
  if (error instanceof MongoServerError && error.code === MAX_TIME_EXPIRED) {
    return new AppError(503, 'The query took too long and was stopped; narrow its filters.');
  }
  // A write concern timeout: the write may or may not be durable; say so honestly.
  if (error instanceof MongoWriteConcernError) {
    return new AppError(503, 'The write was not confirmed by a majority of the database nodes; check the entry before retrying.');
  }
  return error;
}
