'use strict';
// What the peer's server and load generator share: their command lines, /proc readings,
// and the watch that ends them with the process that started them.

const fs = require('fs');

/**
 * `--name value` pairs (a `--flag` without a value is "true") over `defaults`.
 * Anything that is not an option is refused, so that a typo does not run a default.
 */
function options(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    if (!argv[i].startsWith('--')) throw new Error(`unexpected argument ${argv[i]}`);
    const name = argv[i].slice(2);
    const next = argv[i + 1];
    out[name] = next !== undefined && !next.startsWith('--') ? argv[++i] : 'true';
  }
  return out;
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ). */
const CLK_TCK = 100;

/** The fields of /proc/<pid>/stat after the command name, or null. */
function statFields(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** A process's CPU time (user + system), in seconds; NaN when it cannot be read. */
function cpuSeconds(pid) {
  const f = statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) / CLK_TCK : NaN;
}

/** A line of /proc/<pid>/status in MB (`VmRSS`, `VmHWM`); NaN when it cannot be read. */
function statusMb(pid, key) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** The whole machine's busy and steal seconds so far, from /proc/stat. */
function machineSeconds() {
  try {
    const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - f[3] - f[4]) / CLK_TCK, steal: (f[7] || 0) / CLK_TCK };
  } catch {
    return { busy: NaN, steal: NaN };
  }
}

/** Exits (status 4) within a second of the parent process going away, even if it was killed. */
function exitWithParent(who) {
  const parent = () => {
    const f = statFields('self');
    return f ? Number(f[1]) : process.ppid;
  };
  const first = parent();
  setInterval(() => {
    if (parent() !== first) {
      console.error(`${who}: the process that started it went away, exiting`);
      process.exit(4);
    }
  }, 1000).unref();
}

module.exports = { options, cpuSeconds, statusMb, machineSeconds, exitWithParent };
