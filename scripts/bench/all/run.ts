/** Runs one step's command as a child process, echoing its output, bounded in time. */
import { spawn } from "node:child_process";
import { ROOT } from "./settings";

/** Runs a command, echoing its output, killed (its process group) after `timeoutMs`. */
export function run(
  cmd: string,
  args: string[],
  opts: { cwd?: string; timeoutMs: number; env?: Record<string, string> },
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    const onData = (b: Buffer, to: NodeJS.WriteStream) => {
      out += b.toString();
      to.write(b);
    };
    child.stdout.on("data", (b: Buffer) => onData(b, process.stdout));
    child.stderr.on("data", (b: Buffer) => onData(b, process.stderr));
    const timer = setTimeout(() => {
      console.error(`[bench] ${cmd} ${args.join(" ")} exceeded ${opts.timeoutMs / 1000} s: stopping it`);
      if (child.pid) process.kill(-child.pid, "SIGTERM");
    }, opts.timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}
