/**
 * What `hub-agent version` reports. A release build bakes these in with `--define` (packaging/build.ts); run from
 * source (or compiled by the tests) they are unknown, and the version is package.json's.
 */
import pkg from "../package.json" with { type: "json" };

declare const HUB_AGENT_VERSION: string | undefined;
declare const HUB_AGENT_COMMIT: string | undefined;
declare const HUB_AGENT_BUILT: string | undefined;
declare const HUB_AGENT_TARGET: string | undefined;

export const BUILD = {
  version: typeof HUB_AGENT_VERSION === "string" ? HUB_AGENT_VERSION : pkg.version,
  commit: typeof HUB_AGENT_COMMIT === "string" ? HUB_AGENT_COMMIT : null,
  built: typeof HUB_AGENT_BUILT === "string" ? HUB_AGENT_BUILT : null,
  target: typeof HUB_AGENT_TARGET === "string" ? HUB_AGENT_TARGET : null,
};
