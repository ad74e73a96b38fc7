import { defineCommand } from "citty";
import { globalArgs } from "../context.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({ examples: [["hub-agent version", "the version (as --version and -V)"]] }),
  args: { ...globalArgs },
  async run({ args }) {
    const { VERSION } = await import("../main.ts");
    process.stdout.write(args.json ? JSON.stringify({ version: VERSION }) + "\n" : `${VERSION}\n`);
  },
});
