/**
 * A throwaway Debian root made from this system: its root file system as the lower layer of an overlay, every
 * change in a temporary upper directory, each command run chrooted into it in a mount and pid namespace of its own
 * (unshare). Made in well under a second, with no download (debootstrap would fetch a whole system); dpkg runs the
 * maintainer scripts in it for real (adduser, dpkg-statoverride), and nothing reaches this machine's own root.
 *
 * systemd does not run in it. So that the maintainer scripts take their systemd branch anyway, /run/systemd/system
 * exists, and systemctl and deb-systemd-invoke are stand-ins recording each call in /var/log/systemctl.calls.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runToEnd } from "../support/procs.ts";

export interface RootRun {
  code: number;
  stdout: string;
  stderr: string;
}

// $1 the work directory (up, work, root, shared), $2 the script to run in the root.
const SETUP = `set -e
d=$1 r=$1/root
mount -t overlay overlay -o "lowerdir=/,upperdir=$d/up,workdir=$d/work" "$r"
mount -t proc proc "$r/proc"
mount --bind /dev "$r/dev"
mount -t tmpfs tmpfs "$r/run"
mount -t tmpfs tmpfs "$r/tmp"
mkdir -p "$r/run/systemd/system" "$r/mnt/shared"
mount --bind "$d/shared" "$r/mnt/shared"
exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \\
  /bin/sh -ec "$2"`;

const STAND_IN = '#!/bin/sh\necho "${0##*/} $*" >>/var/log/systemctl.calls\n';

export class DebianRoot {
  readonly dir = mkdtempSync(join(tmpdir(), "hub-debroot-"));
  /** Seen in the root as /mnt/shared. */
  readonly shared = join(this.dir, "shared");

  constructor() {
    for (const d of ["up", "work", "root", "shared"]) mkdirSync(join(this.dir, d));
  }

  /** Runs a shell script (sh -e) as root in the root; stdin is `input` or empty. */
  run(script: string, input = ""): Promise<RootRun> {
    const unshare = ["unshare", "--mount", "--pid", "--fork", "--propagation", "private"];
    return runToEnd([...unshare, "sh", "-c", SETUP, "sh", this.dir, script], { input });
  }

  /** Runs a script that must succeed; its stdout. */
  async ok(script: string, input = ""): Promise<string> {
    const r = await this.run(script, input);
    if (r.code !== 0) throw new Error(`exit ${r.code} from: ${script}\n${r.stdout}${r.stderr}`);
    return r.stdout;
  }

  /**
   * Puts the systemctl and deb-systemd-invoke stand-ins in place, and turns off man-db's index update (its
   * trigger takes about 10 s of each dpkg call here, and is man-db's business, not the package's).
   */
  async prepare(): Promise<void> {
    const install = (p: string) => `cat >${p} <<'EOF'\n${STAND_IN}EOF\nchmod 0755 ${p}`;
    await this.ok(
      [
        install("/usr/bin/systemctl"),
        install("/usr/bin/deb-systemd-invoke"),
        // The answer alone changes nothing until man-db is configured again: its trigger looks for this file.
        "echo 'man-db man-db/auto-update boolean false' | debconf-set-selections",
        "rm -f /var/lib/man-db/auto-update",
      ].join("\n"),
    );
  }

  /** The systemctl and deb-systemd-invoke calls since the last look. */
  async systemdCalls(): Promise<string[]> {
    const out = await this.ok("cat /var/log/systemctl.calls 2>/dev/null || true; rm -f /var/log/systemctl.calls");
    return out.split("\n").filter(Boolean);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Why a throwaway root can't be made here, or undefined when it can (checked by making one). */
export async function debianRootMissing(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return "root (mount and chroot), which this test is not running as";
  for (const tool of ["unshare", "chroot", "dpkg", "dpkg-deb"])
    if (!Bun.which(tool)) return `${tool} (Debian's util-linux, coreutils and dpkg)`;
  const root = new DebianRoot();
  try {
    const r = await root.run("test -x /usr/bin/dpkg && test -x /usr/sbin/adduser");
    if (r.code !== 0) return `an overlay of / to chroot into, or adduser in it: ${r.stderr.trim() || `exit ${r.code}`}`;
  } finally {
    root.remove();
  }
  return undefined;
}
