import { defineCommand } from "citty";
import { globalArgs, invocationOf } from "../context.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent version", "the version, commit, build date, target and Bun's version"],
      ["hub-agent version --json", "the same as one JSON object"],
    ],
  }),
  args: { ...globalArgs },
  async run({ args, data }) {
    const { BUILD } = await import("../build-info.ts");
    const info = { ...BUILD, bun: process.versions.bun ?? null };
    const lines = [
      `hub-agent ${info.version}`,
      `commit  ${info.commit ?? "unknown"}`,
      `built   ${info.built ?? "unknown"}`,
      `target  ${info.target ?? "unknown"}`,
      `bun     ${info.bun ?? `none (${navigator.userAgent})`}`,
    ];
    invocationOf(data).stdout(args.json ? JSON.stringify(info) : lines.join("\n"));
  },
});
