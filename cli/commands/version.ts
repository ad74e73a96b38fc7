import { defineCommand } from "citty";
import { globalArgs } from "../context.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent version", "the version, commit, build date, target and Bun's version"],
      ["hub-agent version --json", "the same as one JSON object"],
    ],
  }),
  args: { ...globalArgs },
  async run({ args }) {
    const { BUILD } = await import("../build-info.ts");
    const info = { ...BUILD, bun: process.versions.bun ?? null };
    const lines = [
      `hub-agent ${info.version}`,
      `commit  ${info.commit ?? "unknown"}`,
      `built   ${info.built ?? "unknown"}`,
      `target  ${info.target ?? "unknown"}`,
      `bun     ${info.bun ?? `none (${navigator.userAgent})`}`,
    ];
    process.stdout.write(args.json ? JSON.stringify(info) + "\n" : lines.join("\n") + "\n");
  },
});
