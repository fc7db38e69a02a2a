/** Ingest errors: what was wrong, in which event, at which field, so a person can act on it. */

export interface IngestError {
  /** Index of the offending event in the batch (absent when the body as a whole is bad). */
  index?: number;
  /** Dotted path inside the event, e.g. "object.metadata.name". */
  field?: string;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; error: IngestError };

/** Renders an error as one line for logs. */
export function formatIngestError(e: IngestError): string {
  const where = [e.index !== undefined ? `event ${e.index}` : "", e.field ?? ""].filter(Boolean).join(", ");
  return where ? `${where}: ${e.message}` : e.message;
}
