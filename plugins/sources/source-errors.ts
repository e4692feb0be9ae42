import { AppError } from '../../kernel/index.js';

/** A write or read reached a source after its stream was closed or redefined (retryable). */
export class SourceClosedError extends AppError {
  constructor(stream: string) {
    super(503, `The source of stream [${stream}] is closed.`);
    this.name = 'SourceClosedError';
  }
}
