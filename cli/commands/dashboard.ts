import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { dashboardLink } from "../../lib/app/dashboard.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({ examples: [["hub-agent dashboard", "the web page of who is online"]] }),
  args: { ...globalArgs },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const config = await ctx.config();
    const link = await dashboardLink({ config, logger: ctx.logger, watched: ctx.invocation.guards });
    if (!link.ok)
      throw new CliError(
        `no dashboard link: ${link.reason}; set api.web_url to your community's web address`,
        EXIT.UNREACHABLE,
      );
    ctx.emit({ url: link.url, source: link.source });
    ctx.say(link.url);
  },
});
