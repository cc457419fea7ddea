// The page is built into the build folder next to the gpuplan binary (build/web), where
// `gpuplan serve` finds it; GPUPLAN_WEB_OUT moves it.
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';

// The page bundles the message catalogue (data/messages.json) but not the CLI's own lines
// ("cli.*" keys, read by the binary) nor the library's templates (the server translates its
// prose): they are half the catalogue, and the first load stays small (docs/performance.md).
const catalogue = fileURLToPath(new URL('../data/messages.json', import.meta.url));
const pageMessages: Plugin = {
  name: 'gpuplan-page-messages',
  enforce: 'pre',
  transform(code, id) {
    if (id.split('?')[0] !== catalogue) return null;
    const all = JSON.parse(code).messages as Record<string, unknown>;
    const messages = Object.fromEntries(Object.entries(all).filter(([k]) => !k.startsWith('cli.')));
    return { code: JSON.stringify({ messages }), map: null };
  },
};

export default defineConfig({
  base: '/',
  plugins: [pageMessages],
  build: {
    outDir: process.env.GPUPLAN_WEB_OUT ?? '../build/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 1200,
  },
  server: { fs: { allow: ['..'] } },
});
