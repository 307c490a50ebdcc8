import { createServer } from 'node:net';

/** Whether nothing listens on 127.0.0.1:port yet (a probe server binds it and lets it go). */
export function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
