/** Only this machine can connect: 127.0.0.0/8, ::1, localhost (`http.listen`, the plugin console's and econ's host). */
export function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "::1" || /^127(\.\d{1,3}){3}$/.test(hostname);
}
