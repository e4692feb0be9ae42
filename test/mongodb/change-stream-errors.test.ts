import { MongoServerError } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { cannotResume, changeStreamsUnsupported } from '../../plugins/mongodb/errors.js';

/**
 * How both change-stream followers (the definition store and the collection watcher) read a
 * stopped stream: one classification, so the two cannot disagree (the collection watcher used
 * to ignore the NonResumableChangeStreamError label and kept a useless token). No server.
 */
const serverError = (code: number, labels: string[] = []): MongoServerError => {
  const error = new MongoServerError({ message: `code ${code}`, code });
  for (const label of labels) error.addErrorLabel(label);
  return error;
};

describe('change stream failures (no server: the classification alone)', () => {
  it('only a server error that says so (history lost, fatal, labelled non-resumable) drops the token; a stream that merely ended resumes from it', () => {
    // The real driver emits `close` while it resumes by itself: an end is not a lost history (issue #29).
    expect(cannotResume(undefined)).toBe(false);
    for (const code of [286, 280, 260]) expect(cannotResume(serverError(code))).toBe(true);
    expect(cannotResume(serverError(1234, ['NonResumableChangeStreamError']))).toBe(true);
    // Failover, network, shutdown: resume from the token.
    for (const code of [91, 189, 11602, 6]) expect(cannotResume(serverError(code, ['ResumableChangeStreamError']))).toBe(false);
    expect(cannotResume(new Error('socket closed'))).toBe(false);
  });

  it('a deployment without change streams (standalone, not allowed) is told apart', () => {
    for (const code of [40573, 40324, 115, 20]) expect(changeStreamsUnsupported(serverError(code))).toBe(true);
    expect(changeStreamsUnsupported(serverError(286))).toBe(false);
    expect(changeStreamsUnsupported(undefined)).toBe(false);
    expect(changeStreamsUnsupported(new Error('x'))).toBe(false);
  });
});
