/**
 * One line for a request that got no HTTP answer, in our words: the runtime's own messages carry developer hints
 * ("pass `verbose: true` in the second argument to fetch()", "Is the computer able to access the url?") that mean
 * nothing to an operator. TLS failures are told apart: the certificate (untrusted, expired, another host's) and
 * the protocol (no TLS on that port). Codes are the ones Node and Bun give.
 */

export type NetworkCause = "tls" | "network";

const CERTIFICATE: Record<string, string> = {
  DEPTH_ZERO_SELF_SIGNED_CERT: "the certificate is self-signed",
  SELF_SIGNED_CERT_IN_CHAIN: "the certificate chain ends in an untrusted self-signed certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "the certificate is signed by an authority this machine does not trust",
  UNABLE_TO_GET_ISSUER_CERT: "the certificate is signed by an authority this machine does not trust",
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: "the certificate is signed by an authority this machine does not trust",
  CERT_UNTRUSTED: "the certificate is not trusted",
  CERT_REJECTED: "the certificate was rejected",
  CERT_SIGNATURE_FAILURE: "the certificate's signature is invalid",
  CERT_REVOKED: "the certificate was revoked",
  CERT_HAS_EXPIRED: "the certificate has expired",
  CERT_NOT_YET_VALID: "the certificate is not valid yet (is this machine's clock right?)",
  ERR_TLS_CERT_ALTNAME_INVALID: "the certificate is for another host name",
  HOSTNAME_MISMATCH: "the certificate is for another host name",
};

const NETWORK: Record<string, string> = {
  ECONNREFUSED: "connection refused: nothing listens at that host and port",
  ConnectionRefused: "connection refused: nothing listens at that host and port",
  ECONNRESET: "the connection was closed before an answer; does the service want https://?",
  ConnectionClosed: "the connection was closed before an answer; does the service want https://?",
  ENOTFOUND: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved now (DNS did not answer)",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ETIMEDOUT: "the connection timed out",
};

/** Bun's and Node's hint sentences, kept out of a message we do not recognise. */
const HINTS = [
  /\s*For more information, pass `verbose: true`[^.]*\.?/g,
  /\s*Is the computer able to access the url\?/g,
];

/**
 * Failures that only come before a connection was made (or trusted): nothing of the request left this machine, so
 * a write met by one was not carried out. A reset, a protocol error or our own timeout may come after the request
 * went out; so may ETIMEDOUT, EHOSTUNREACH and ENETUNREACH (a connected socket's retransmissions, an ICMP error).
 */
const BEFORE_SENDING = new Set([
  ...Object.keys(CERTIFICATE),
  "ECONNREFUSED",
  "ConnectionRefused",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

export function describeNetworkError(err: unknown): { message: string; cause: NetworkCause; unsent: boolean } {
  const cause = (err as { cause?: unknown })?.cause ?? err;
  const code = String((cause as { code?: unknown })?.code ?? "");
  const unsent = BEFORE_SENDING.has(code);
  if (CERTIFICATE[code]) return { message: `${CERTIFICATE[code]} (${code})`, cause: "tls", unsent };
  if (code === "EPROTO" || code.startsWith("ERR_SSL_") || code.startsWith("ERR_TLS_"))
    return {
      message: `the handshake failed: does the service speak HTTPS on that port? (${code})`,
      cause: "tls",
      unsent,
    };
  if (NETWORK[code]) return { message: `${NETWORK[code]} (${code})`, cause: "network", unsent };
  let text = cause instanceof Error ? cause.message : String(cause);
  for (const hint of HINTS) text = text.replace(hint, "");
  text = text.replace(/\s+/g, " ").trim();
  if (code && !text.includes(code)) text = `${code}: ${text}`;
  return { message: text || "request failed", cause: "network", unsent };
}
