/**
 * The configuration as the program uses it: lib/config's loader, schema and template, given the game's vocabulary
 * (lib/game/vocabulary.ts). The one place the two meet: the configuration and the game never import each other
 * (.ci/check-imports.ts). Commands, benches and tests load the configuration from here.
 */
import { type LoadOptions, type LoadResult, configRules, loadConfig as load } from "../config/index.ts";
import { renderServerTemplate as renderServer, renderTemplate as render } from "../config/template.ts";
import { GAME_VOCABULARY } from "../game/vocabulary.ts";

export const CONFIG_RULES = configRules(GAME_VOCABULARY);

/**
 * The configuration checked, with what its game says of its players' ids: a one-shot command that finds both in the
 * checked configuration's cache (config-cache.ts) needs no preset to resolve `<player>`.
 */
export async function loadConfig(opts: LoadOptions): Promise<LoadResult> {
  const result = await load(opts, CONFIG_RULES);
  if (!result.ok) return result;
  const { userTypeOf, nameIdOf } = await import("../game/user-type.ts");
  const [userType, nameId] = await Promise.all([userTypeOf(result.config), nameIdOf(result.config)]);
  return { ...result, game: { userType, byName: nameId !== undefined } };
}
/** Every leaf key path, e.g. "api.url" (records like hooks excluded). */
export const configKeys = (): string[] => [...CONFIG_RULES.keys];
/** The commented configuration `hub-agent init` writes. */
export const renderTemplate = (values?: Record<string, string>): string => render(CONFIG_RULES, values);
/** A server's file of servers.d, beside `shared` (`hub-agent init --server <name>`). */
export const renderServerTemplate = (name: string, shared: string): string => renderServer(CONFIG_RULES, name, shared);
/** What each key is for and how to fix it. */
export const KEY_HELP = CONFIG_RULES.help;

export {
  type Config,
  type GameFacts,
  type LoadOptions,
  type LoadResult,
  DEFAULT_CONFIG_FILE,
  SPEC_INTERVALS,
  envName,
} from "../config/index.ts";
export { ALTERNATIVES } from "../config/template.ts";
