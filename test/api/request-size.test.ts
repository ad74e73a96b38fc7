/** Requests that carry a list stay under the documented URL size, whatever the list's length. */
import { expect, test } from "bun:test";
import { appliedRewardChunks, MAX_URL_BYTES } from "../../lib/api/client.ts";
import { chunkQuery, urlBytes } from "../../lib/api/request-size.ts";

const ids = (n: number) => Array.from({ length: n }, () => crypto.randomUUID());
const q = { bundleId: crypto.randomUUID(), serverId: crypto.randomUUID() };

test("5,000 user ids: every request within 4 KiB of URL, none left out, none twice, in order", () => {
  const base = "https://api.vyhub.app/a-rather-long-community-instance-name/v1";
  const userIds = ids(5000);
  const chunks = appliedRewardChunks(base, { ...q, userIds });
  expect(chunks.flat()).toEqual(userIds);
  for (const [i, chunk] of chunks.entries()) {
    const bytes = urlBytes(base, "/packet/reward/applied/user", {
      active: true,
      foreign_ids: true,
      status: "OPEN",
      serverbundle_id: q.bundleId,
      for_server_id: q.serverId,
      user_id: chunk,
    });
    expect(bytes).toBeLessThanOrEqual(MAX_URL_BYTES);
    if (i < chunks.length - 1) expect(bytes).toBeGreaterThan(MAX_URL_BYTES - 100); // full, not one id a request
  }
  expect(chunks.length).toBeLessThan(70);
});

test("a few ids are one request; none is none", () => {
  expect(appliedRewardChunks("http://127.0.0.1:1/v1", { ...q, userIds: ids(3) })).toHaveLength(1);
  expect(appliedRewardChunks("http://127.0.0.1:1/v1", { ...q, userIds: [] })).toEqual([]);
});

test("the base path and values that need encoding count as sent", () => {
  const values = ["a b", "ü", "x&y"];
  const [only] = chunkQuery("http://h/p%20q", "/x", {}, "k", values, 1000);
  expect(only).toEqual(values);
  // "/p%20q/x?k=a+b&k=%C3%BC&k=x%26y": each value as URLSearchParams encodes it.
  expect(urlBytes("http://h/p%20q", "/x", { k: values })).toBe("/p%20q/x?k=a+b&k=%C3%BC&k=x%26y".length);
  const tight = chunkQuery("http://h/", "/x", {}, "k", ["aaaa", "bbbb", "cccc"], "/x?k=aaaa&k=bbbb".length);
  expect(tight).toEqual([["aaaa", "bbbb"], ["cccc"]]);
  expect(() => chunkQuery("http://h/", "/x", {}, "k", ["a".repeat(100)], 50)).toThrow("does not fit");
});
