import { defineCommand } from "citty";
import { globalArgs, invocationOf } from "../context.ts";

export default defineCommand({
  meta: { name: "version", description: "print the version (as --version and -V do)" },
  args: { ...globalArgs },
  async run({ args, data }) {
    const { VERSION } = await import("../main.ts");
    invocationOf(data).stdout(args.json ? JSON.stringify({ version: VERSION }) : VERSION);
  },
});
