import {
  MongoError,
  MongoNetworkError,
  MongoOperationTimeoutError,
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
 * Server codes of conditions that pass by themselves (a primary stepping down or being
 * elected, a node shutting down, an operation interrupted by a replica-set change, a
 * timeout): the request changed nothing (or, for a write concern timeout, may not have)
 * and the client should retry. 91 ShutdownInProgress, 189 PrimarySteppedDown, 11600
 * InterruptedAtShutdown, 11602 InterruptedDueToReplStateChange, 10107 NotWritablePrimary,
 * 13435 NotPrimaryNoSecondaryOk, 13436 NotPrimaryOrSecondary, 6 HostUnreachable,
 * 7 HostNotFound, 89 NetworkTimeout, 9001 SocketException, 262 ExceededTimeLimit,
 * 64 WriteConcernFailed (wtimeout), 50 MaxTimeMSExpired.
 */
export const TRANSIENT_CODES = new Set([91, 189, 11600, 11602, 10107, 13435, 13436, 6, 7, 89, 9001, 262, 64, MAX_TIME_EXPIRED]);

/** Server codes: change streams need a replica set or sharded cluster (40573), or are not allowed here. */
const CHANGE_STREAMS_UNSUPPORTED = new Set([40573, 40324, 115, 20]);
/** Server codes: the change stream cannot continue from its token (history lost, fatal). */
const HISTORY_LOST = new Set([286, 280, 260]);

/** The numeric server code of a failure, if any. */
export function codeOf(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** A change stream failed because this deployment has none (a standalone server): poll instead. */
export function changeStreamsUnsupported(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && CHANGE_STREAMS_UNSUPPORTED.has(code);
}

/**
 * A change stream error the server calls non-resumable (its history no longer holds the token,
 * a fatal change stream error, or the NonResumableChangeStreamError label): the token is
 * dropped and what it would have told is found afresh. A stream that merely ended, or any
 * other error, is not this: it resumes from its token (issue #29: the real driver emits
 * `close` while it resumes by itself, and reading that as "cannot resume" lost every change
 * made in the gap).
 */
export function cannotResume(error: unknown): boolean {
  if (error === undefined || error === null) return false;
  const code = codeOf(error);
  if (code !== undefined && HISTORY_LOST.has(code)) return true;
  const labels = (error as { errorLabels?: unknown }).errorLabels;
  return Array.isArray(labels) && labels.includes('NonResumableChangeStreamError');
}

/** Seconds a client is told to wait before retrying a transient failure (`Retry-After`). */
export const RETRY_AFTER_SECONDS = 2;

function unavailable(status: 503, message: string): AppError {
  const error = new AppError(status, message);
  error.headers = [['Retry-After', String(RETRY_AFTER_SECONDS)]];
  return error;
}

/** A failure that passes by itself (no primary, failover, network, timeouts). */
export function isTransient(error: unknown): boolean {
  if (
    error instanceof MongoServerSelectionError ||
    error instanceof MongoNetworkError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoOperationTimeoutError ||
    error instanceof MongoWriteConcernError ||
    (error instanceof Error && error.name === 'MongoWaitQueueTimeoutError')
  ) {
    return true;
  }
  if (error instanceof MongoError) {
    const code = typeof error.code === 'number' ? error.code : Number(error.code);
    if (TRANSIENT_CODES.has(code)) return true;
    if (error.hasErrorLabel('RetryableWriteError') || error.hasErrorLabel('TransientTransactionError')) return true;
  }
  return false;
}

/**
 * Driver errors to the product's errors: a duplicate on a unique index is a 409 (the
 * same element shape the `unique` rule produces); every transient condition a 503 with
 * `Retry-After` (never a 500: nothing is wrong with the request). Anything else is a bug
 * or an operator problem: 500, logged.
 */
export function mapMongoError(error: unknown, connection: string, keyName: string): unknown {
  if (error instanceof DatabaseUnavailableError) {
    error.headers ??= [['Retry-After', String(RETRY_AFTER_SECONDS)]];
    return error;
  }
  if (error instanceof AppError) return error;
  if (isDuplicateKey(error)) {
    const field = duplicateField(error, keyName);
    return new ValidationError([{ message: `The ${field.replace(/_/g, ' ')} has already been taken.`, meta: { field, rule: 'unique' } }]);
  }
  if (!isTransient(error)) return error;
  const code = error instanceof MongoError ? error.code : undefined;
  if (code === MAX_TIME_EXPIRED || code === 262 || error instanceof MongoOperationTimeoutError) {
    return unavailable(503, 'The query took too long and was stopped; narrow its filters or retry later.');
  }
  // A write concern timeout: the write may or may not be durable; say so honestly.
  if (error instanceof MongoWriteConcernError || code === 64) {
    return unavailable(503, 'The write was not confirmed by a majority of the database nodes in time; check the entry before retrying.');
  }
  const unreachable = new DatabaseUnavailableError(connection);
  unreachable.headers = [['Retry-After', String(RETRY_AFTER_SECONDS)]];
  return unreachable;
}
