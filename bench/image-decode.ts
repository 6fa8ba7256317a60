/**
 * `deno run -A bench/image-decode.ts`: the time and memory one upload's pixel decode costs
 * (src/metadata/image/decode-image.ts), for the worst image of each type the limits allow: 4096 x
 * 4096 pixels in at most 1 MiB. Each case runs in a process of its own, so its peak resident set
 * (VmHWM) is its own; a baseline process that loads the same modules and decodes nothing is
 * subtracted. docs/metadata.md records a run.
 */
import { decodeImage } from "../src/metadata/image/decode-image.ts";
import { sniffImage } from "../src/metadata/image/sniff.ts";
import { encodedJpeg, encodedPng, encodedWebp } from "../tests/metadata/image/encoded.ts";
import { encode as encodePng } from "fast-png";

const SIDE = 4096;

/** The images, made in the parent and handed to each child as a file. */
async function make(name: string): Promise<Uint8Array> {
  switch (name) {
    case "png-rgba16-flat":
      // Largest inflate the bound allows: 4096 * (1 + 4096 * 8) bytes = 134 MB from ~130 KB.
      return encodePng({
        width: SIDE,
        height: SIDE,
        data: new Uint16Array(SIDE * SIDE * 4),
        channels: 4,
        depth: 16,
      });
    case "png-rgba8-noise-512":
      return encodedPng(512, 512, { channels: 4, depth: 8 });
    case "jpeg-4096":
      return encodedJpeg(SIDE, SIDE, 60, { noise: false });
    case "webp-4096":
      return await encodedWebp(SIDE, SIDE, { noise: false });
    default:
      return new Uint8Array(0);
  }
}

function peakRssMb(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function child(file: string) {
  const bytes = await Deno.readFile(file);
  const image = sniffImage(bytes);
  const started = performance.now();
  const r = image
    ? await decodeImage(bytes, image, { maxWidth: SIDE, maxHeight: SIDE })
    : { ok: true as const };
  const ms = performance.now() - started;
  const reason = r.ok ? "" : r.reason;
  console.log(JSON.stringify({ ok: r.ok, reason, ms, peakMb: peakRssMb(), bytes: bytes.length }));
}

async function parent() {
  const cases = ["baseline", "png-rgba16-flat", "png-rgba8-noise-512", "jpeg-4096", "webp-4096"];
  let baseline = 0;
  for (const name of cases) {
    const file = await Deno.makeTempFile({ suffix: `-${name}` });
    await Deno.writeFile(file, await make(name));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", import.meta.filename!, "--child", file],
    }).output();
    await Deno.remove(file);
    const r = JSON.parse(new TextDecoder().decode(out.stdout));
    if (name === "baseline") baseline = r.peakMb;
    const extra = (r.peakMb - baseline).toFixed(0);
    const kb = (r.bytes / 1024).toFixed(0);
    console.log(
      `${name.padEnd(22)} ${kb.padStart(6)} KiB  ok=${r.ok}  ${
        r.ms.toFixed(0).padStart(5)
      } ms  +${extra} MB peak RSS over baseline ${r.reason}`,
    );
  }
}

if (Deno.args[0] === "--child") await child(Deno.args[1]);
else await parent();
