/**
 * Response bodies within a memory budget (lib/api/body.ts): a compressed answer is inflated as it is read, so the cap
 * counts what it inflates to; an error's body is read only as far as its message needs; and however many requests
 * are in flight, one body at a time is read past LARGE_BODY_BYTES.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { deflateSync } from "node:zlib";
import { createApi, describeError } from "../../lib/api/client.ts";
import { ERROR_BODY_BYTES, LARGE_BODY_BYTES, readBody } from "../../lib/api/body.ts";
import { FastClock } from "./helpers.ts";

const KEY = "sk_live_local_body_0123456789";
const SERVER = JSON.stringify({ id: "s", name: "n", type: "GMOD" });

/** Bytes the endless answers have handed to the socket so far. */
let served = 0;
/** 100 MB, produced only as fast as the client reads. */
const endless = (fill = " ") => {
  const chunk = new TextEncoder().encode(fill.repeat(64 * 1024));
  let left = 100_000_000;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      left -= chunk.byteLength;
      served += chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
};
/** 20 MB of spaces, gzipped to about 20 KB. */
const bomb = Bun.gzipSync(new Uint8Array(20_000_000).fill(0x20));
let acceptEncoding = "";

const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(req) {
    acceptEncoding = req.headers.get("accept-encoding") ?? "";
    const json = { "content-type": "application/json" };
    switch (new URL(req.url).pathname) {
      case "/v1/server/gzip":
        return new Response(Bun.gzipSync(new TextEncoder().encode(SERVER)), {
          headers: { ...json, "content-encoding": "gzip" },
        });
      case "/v1/server/deflate":
        return new Response(deflateSync(SERVER), {
          headers: { ...json, "content-encoding": "deflate" },
        });
      case "/v1/server/corrupt":
        return new Response(new Uint8Array(64).fill(7), { headers: { ...json, "content-encoding": "gzip" } });
      case "/v1/server/brotli":
        return new Response(SERVER, { headers: { ...json, "content-encoding": "br" } });
      case "/v1/group/":
        return new Response(bomb, { headers: { ...json, "content-encoding": "gzip" } });
      case "/v1/server/error":
        return new Response(endless("x"), { status: 500, headers: json });
      default:
        return new Response('{"detail":"Not Found"}', { status: 404, headers: json });
    }
  },
});
afterAll(() => server.stop(true));
const api = createApi({ url: `http://127.0.0.1:${server.port}/v1/`, key: KEY, clock: new FastClock(), retries: 0 });

describe("compressed answers", () => {
  test("gzip and deflate are offered and read; another encoding, or a corrupt one, is refused, naming it", async () => {
    for (const id of ["gzip", "deflate"]) {
      const r = await api.getServer(id);
      expect(r.ok ? r.value : describeError(r.error)).toEqual({ id: "s", name: "n", type: "GMOD" } as never);
    }
    expect(acceptEncoding).toBe("gzip, deflate");
    const r = await api.getServer("brotli");
    expect(!r.ok && describeError(r.error)).toBe(
      "GET /server/brotli: invalid response at (body): an answer encoded as br, which was not offered",
    );
    const corrupt = await api.getServer("corrupt");
    expect(!corrupt.ok && describeError(corrupt.error)).toBe(
      "GET /server/corrupt: invalid response at (body): an answer whose gzip encoding is corrupt",
    );
  });

  test("a gzip answer is inflated as it is read, and the cap counts what it inflates to", async () => {
    const r = await api.getGroups();
    expect(!r.ok && describeError(r.error)).toBe(
      "GET /group/: invalid response at (body): response larger than the 16777216-byte cap (api.max_response_bytes); not read",
    );
    // As the runtime hands it over when asked not to inflate it: the compressed bytes, a little at a time.
    let sent = 0;
    const compressed = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= bomb.byteLength) return controller.close();
        controller.enqueue(bomb.subarray(sent, sent + 512));
        sent += 512;
      },
    });
    const headers = new Headers({ "content-encoding": "gzip" });
    expect(await readBody(compressed, { maxBytes: 1024 * 1024, headers })).toEqual({ text: "", tooLarge: true });
    expect(sent).toBeLessThan(bomb.byteLength / 4); // what inflated past the cap was never fetched
  });
});

test("an error's body is read only as far as its message needs", async () => {
  served = 0;
  const r = await api.getServer("error");
  expect(r.ok).toBe(false);
  if (r.ok) return;
  expect(r.error).toMatchObject({ kind: "ServerError", status: 500 });
  expect(r.error.message).toMatch(/^x+/);
  // The cap for an answer is 16 MiB; an error stops at ERROR_BODY_BYTES (plus what the socket held).
  expect(served).toBeLessThan(ERROR_BODY_BYTES + 8 * 1024 * 1024);
});

describe("large bodies, one at a time", () => {
  /** A body of `size` bytes in 32 KiB chunks, noting how far it was read. */
  function body(size: number, progress: { read: number }) {
    const chunk = new Uint8Array(32 * 1024).fill(0x20);
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          if (progress.read >= size) return controller.close();
          await Bun.sleep(1); // a network's pace: the readers take turns on the event loop
          progress.read += chunk.byteLength;
          controller.enqueue(chunk);
        },
      },
      { highWaterMark: 0 },
    );
  }
  const headers = new Headers();

  test("of four large bodies read at once, one at a time goes past LARGE_BODY_BYTES; small ones are not held up", async () => {
    const large = Array.from({ length: 4 }, () => ({ read: 0 }));
    const small = { read: 0 };
    let most = 0;
    const watch = setInterval(() => {
      const past = large.filter((p) => p.read > LARGE_BODY_BYTES + 32 * 1024 && p.read < 4 * 1024 * 1024);
      most = Math.max(most, past.length);
    }, 1);
    const reads = large.map((p) => readBody(body(4 * 1024 * 1024, p), { maxBytes: 16 * 1024 * 1024, headers }));
    // A small body read while the large ones wait for their turn.
    const smallText = await readBody(body(64 * 1024, small), { maxBytes: 16 * 1024 * 1024, headers });
    const smallDoneWhile = large.filter((p) => p.read >= 4 * 1024 * 1024).length;
    const texts = await Promise.all(reads);
    clearInterval(watch);
    expect(texts.map((t) => t.text.length)).toEqual([4, 4, 4, 4].map((mb) => mb * 1024 * 1024));
    expect(smallText.text.length).toBe(64 * 1024);
    expect(smallDoneWhile).toBeLessThan(4);
    expect(most).toBe(1);
  });

  test("a read waiting for its turn gives up when its attempt times out", async () => {
    const first = { read: 0 };
    const holding = readBody(body(8 * 1024 * 1024, first), { maxBytes: 16 * 1024 * 1024, headers });
    const second = { read: 0 };
    const waiting = readBody(body(8 * 1024 * 1024, second), {
      maxBytes: 16 * 1024 * 1024,
      headers,
      signal: AbortSignal.timeout(50),
    });
    expect(waiting).rejects.toMatchObject({ name: "TimeoutError" });
    await waiting.catch(() => {});
    expect(second.read).toBeLessThanOrEqual(LARGE_BODY_BYTES + 64 * 1024);
    expect((await holding).text.length).toBe(8 * 1024 * 1024);
  });
});
