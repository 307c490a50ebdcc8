import type { Db } from '../db/client';
import type { Permission } from './permissions';

export interface Principal {
  /** `admin` for ADMIN_TOKEN, otherwise the token's id. */
  tokenId: string;
  permissions: ReadonlySet<Permission>;
}

/** Hono generics shared by every router: bindings from wrangler.toml, per-request variables. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    contextId: string;
    db: Db;
    principal: Principal;
  };
}
