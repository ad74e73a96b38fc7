import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";

export default defineCommand({
  meta: { name: "dashboard", description: "print the link to this server's dashboard (who is online)" },
  args: { ...globalArgs },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const config = await ctx.config();
    const [{ serviceApi }, { openStore }, { dashboardLink }] = await Promise.all([
      import("../../lib/app/service.ts"),
      import("../../lib/store/index.ts"),
      import("../../lib/features/dashboard.ts"),
    ]);
    const { api } = await serviceApi(config, { watched: ctx.invocation.guards });
    const store = await openStore({ dir: config.storage.dir, logger: ctx.logger, sweep: false });
    const link = await dashboardLink({ api, config, store });
    if (!link.ok)
      throw new CliError(
        `no dashboard link: ${link.reason}; set api.web_url to your community's web address`,
        EXIT.UNREACHABLE,
      );
    ctx.emit({ url: link.url, source: link.source });
    ctx.say(link.url);
  },
});
