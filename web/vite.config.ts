import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// The web app: built by scripts/build-web.mjs (npm start, npm run build) and served by the service at /.
export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: { outDir: 'dist', sourcemap: true, target: 'es2022' },
  // `vite dev` on its own port: the API is the service's (npm start on :3000).
  server: { proxy: { '/api': 'http://127.0.0.1:3000' } },
});
