/**
 * Reading a response body within a memory budget (docs/limits.md), whatever the service sends and however many
 * requests are in flight:
 *
 * - a body is read as a stream and abandoned past its cap: `api.max_response_bytes` for an answer, ERROR_BODY_BYTES
 *   for an error's message (nothing needs more of it); a Content-Length announcing more is not read at all;
 * - a body abandoned past its cap is never assembled nor decoded;
 * - a compressed body is inflated here, as it is read, so the cap counts what it inflates to: Bun's fetch would
 *   inflate a 100 KB gzip answer to 100 MB in one piece before the first byte reached the cap (FETCH_OPTIONS);
 * - past LARGE_BODY_BYTES a read waits for the process's one large-body turn, so at most one large body is in
 *   memory at a time (its turn ends once it is decoded; the caller's parse of the text runs before any other
 *   JavaScript, so before the next large read goes on). A read that waits stops reading: its bytes stay in the
 *   socket, and the attempt's timeout keeps running.
 */

/** An error body is read up to this much: the message is cut far shorter than that (errors.ts truncate). */
export const ERROR_BODY_BYTES = 64 * 1024;
/** Bodies up to this size are read side by side; a larger one takes the large-body turn first. */
export const LARGE_BODY_BYTES = 256 * 1024;

/**
 * Bun's fetch is asked to leave the body as it came (`decompress: false`), and readBody inflates it (gzip, deflate:
 * what ACCEPT_ENCODING offers). Other runtimes (the one-shot commands under Deno) inflate it themselves.
 */
const INFLATES_HERE = "Bun" in globalThis;
export const FETCH_OPTIONS: { decompress?: boolean } = INFLATES_HERE ? { decompress: false } : {};
export const ACCEPT_ENCODING = "gzip, deflate";
const FORMATS: Record<string, "gzip" | "deflate"> = { gzip: "gzip", "x-gzip": "gzip", deflate: "deflate" };

/** The large-body turn: one holder at a time, the others wait in order (or until their attempt's signal aborts). */
class Turn {
  private held = false;
  private waiting: (() => void)[] = [];

  take(signal?: AbortSignal): Promise<() => void> {
    const release = () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.held = false;
    };
    if (!this.held) {
      this.held = true;
      return Promise.resolve(once(release));
    }
    return new Promise((resolve, reject) => {
      const granted = () => {
        signal?.removeEventListener("abort", abort);
        resolve(once(release));
      };
      const abort = () => {
        this.waiting = this.waiting.filter((w) => w !== granted);
        reject(signal?.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", abort, { once: true });
      this.waiting.push(granted);
    });
  }
}

const once = (fn: () => void) => {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
};

/** Shared by every service client of the process. */
const largeBodies = new Turn();

/**
 * The body as text, or `tooLarge` (with the first `maxBytes` as text when `keepHead`, for an error's message; an
 * answer over the cap is refused and its text is never needed), or `refused`: why it was not read (an encoding
 * that was not offered).
 */
export async function readBody(
  raw: ReadableStream<Uint8Array> | undefined,
  opts: { maxBytes: number; headers: Headers; signal?: AbortSignal; keepHead?: boolean },
): Promise<{ text: string; tooLarge: boolean; refused?: string }> {
  if (!raw) return { text: "", tooLarge: false };
  const { maxBytes, keepHead = false } = opts;
  let body = raw;
  /** Set when the connection failed (not the inflating): a corrupt encoding is the answer's fault. */
  let rawFailed = false;
  const coding = (opts.headers.get("content-encoding") ?? "").trim().toLowerCase();
  const inflating = INFLATES_HERE && !!coding && coding !== "identity";
  if (inflating) {
    const format = FORMATS[coding];
    if (!format) {
      await raw.cancel().catch(() => {});
      const refused = `an answer encoded as ${coding.slice(0, 40)}, which was not offered`;
      return { text: "", tooLarge: false, refused };
    }
    const source = raw.getReader();
    const tapped = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await source.read();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (e) {
          rawFailed = true;
          controller.error(e);
        }
      },
      cancel: (reason) => source.cancel(reason),
    });
    body = tapped.pipeThrough(new DecompressionStream(format) as unknown as TransformStream<Uint8Array, Uint8Array>);
  }
  const announced = Number(opts.headers.get("content-length") ?? NaN);
  if (Number.isFinite(announced) && announced > maxBytes && !keepHead) {
    await body.cancel().catch(() => {});
    return { text: "", tooLarge: true };
  }
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let tooLarge = false;
  let release: (() => void) | undefined;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const room = maxBytes - size;
      if (value.byteLength > room) {
        tooLarge = true;
        if (!keepHead) {
          chunks.length = 0;
          break;
        }
        chunks.push(value.subarray(0, room));
        size += room;
        break;
      }
      chunks.push(value);
      size += value.byteLength;
      if (size > LARGE_BODY_BYTES && !release) release = await largeBodies.take(opts.signal);
    }
    if (tooLarge) await reader.cancel().catch(() => {});
    if (tooLarge && !keepHead) return { text: "", tooLarge };
    return { text: decode(chunks, size), tooLarge };
  } catch (e) {
    await reader.cancel().catch(() => {});
    if (inflating && !rawFailed && !opts.signal?.aborted)
      return { text: "", tooLarge: false, refused: `an answer whose ${coding} encoding is corrupt` };
    throw e;
  } finally {
    if (release) {
      chunks.length = 0;
      collect();
      release();
    }
  }
}

/**
 * Frees what a large read left (its chunks, their copy) before the next one begins: the engine would collect it
 * only after several more, and each would add its size to the process's memory meanwhile. Bun only; elsewhere the
 * engine's own pace.
 */
function collect(): void {
  (globalThis as { Bun?: { gc(full: boolean): void } }).Bun?.gc(true);
}

function decode(chunks: Uint8Array[], size: number): string {
  if (chunks.length === 1) return new TextDecoder().decode(chunks[0]);
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  chunks.length = 0; // the copy is all that is needed now
  return new TextDecoder().decode(all);
}
