import { defineCommand } from "citty";
import { globalArgs } from "../context.ts";

export default defineCommand({
  meta: { name: "version", description: "print the version, commit, build date, target and Bun's version" },
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
