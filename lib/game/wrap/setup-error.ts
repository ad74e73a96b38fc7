/**
 * Why the wrapped server can't be started as configured (`game.wrapper.user`, `command_pipe`): one line naming the
 * key, the value and the fix; `doctor` shows the problem and the fix apart.
 */
export class WrapperSetupError extends Error {
  override name = "WrapperSetupError";

  constructor(
    readonly problem: string,
    readonly fix: string,
  ) {
    super(`${problem}: ${fix}`);
  }
}
