// The page is built into the build folder next to the gpuplan binary (build/web), where
// `gpuplan serve` finds it; GPUPLAN_WEB_OUT moves it.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  build: {
    outDir: process.env.GPUPLAN_WEB_OUT ?? '../build/web',
    emptyOutDir: true,
    assetsDir: 'assets',
    chunkSizeWarningLimit: 1200,
  },
  server: { fs: { allow: ['..'] } },
});
