import { defineCommand } from "citty";
import { globalArgs } from "../context.ts";

export default defineCommand({
  meta: { name: "version", description: "print the version (as --version and -V do)" },
  args: { ...globalArgs },
  async run({ args }) {
    const { VERSION } = await import("../main.ts");
    process.stdout.write(args.json ? JSON.stringify({ version: VERSION }) + "\n" : `${VERSION}\n`);
  },
});
