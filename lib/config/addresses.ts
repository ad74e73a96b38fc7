/**
 * The addresses an operator writes, checked across keys: the service's URLs (the API key goes over them, so https
 * unless the host is this machine) and http.listen (the status page has no password, so loopback unless allowed).
 */
import { isLoopback } from "../loopback.ts";
import { parseListen } from "./listen.ts";

/** A boolean key as the operator wrote it, before the schema read it (`bool` in schema.ts). */
const isTrue = (raw: unknown) => raw === true || ["true", "1", "yes"].includes(String(raw).toLowerCase());

/** api.url and api.web_url: a URL, https unless the host is this machine or plain http is allowed. */
export function checkUrl(
  url: string,
  allowInsecure: unknown,
  where: string,
  path: string,
  help: Record<string, string>,
): string[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return [`${path} = "${url}" (${where}) is not a URL: ${help[path]}`];
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    return [`${path} = "${url}" (${where}) must start with https://: ${help[path]}`];
  const loopback = ["localhost", "127.0.0.1", "[::1]"].includes(u.hostname) || u.hostname.startsWith("127.");
  if (u.protocol === "http:" && !loopback && !isTrue(allowInsecure))
    return [
      `${path} = "${url}" (${where}) uses plain http to another host, which would send the API key unencrypted: use https://, or set api.allow_insecure = true if you really mean it`,
    ];
  return [];
}

/** http.listen: an address and port, on the loopback unless exposing the page is allowed. */
export function checkListen(listen: string, allowRemote: unknown, where: string): string[] {
  const address = parseListen(listen);
  if (!address)
    return [`http.listen = "${listen}" (${where}) is not an address and port: use e.g. 127.0.0.1:9187 or [::1]:9187`];
  if (isLoopback(address.hostname) || isTrue(allowRemote)) return [];
  return [
    `http.listen = "${listen}" (${where}) is not a loopback address, and the status page and /metrics have no password: use 127.0.0.1:${address.port}, or set http.allow_remote = true if you mean to expose them`,
  ];
}
