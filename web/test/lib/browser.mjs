// Launches Debian's Chromium (headless, WebGPU on SwiftShader: FORMATS.md §7) through
// playwright-core, with a fresh profile; never downloads a browser.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const chromiumPath = process.env.CHROMIUM ?? '/usr/bin/chromium';

export async function launch() {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: apt-get install chromium (tools/deps/web.txt)`);
  const profile = mkdtempSync(join(tmpdir(), 'ws-web-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--enable-unsafe-webgpu', '--enable-features=Vulkan', '--use-webgpu-adapter=swiftshader',
      '--no-sandbox', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-precise-memory-info',
    ],
  });
  return { context, async close() { await context.close(); rmSync(profile, { recursive: true, force: true }); } };
}
