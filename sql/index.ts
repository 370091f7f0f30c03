// The sql/ layer's public entry: the connection, migrations and queries. Nothing outside sql/ writes SQL.

export { openDatabase, ping, type Database, type OpenOptions } from './connection.js';
export { migrate, migrationsDir } from './migrate.js';
export { DatabaseTimeout, DatabaseWatch } from './watch.js';
export {
  TIER_CREDITS,
  createKey,
  findKeyByHash,
  generateKey,
  getSetting,
  hashKey,
  isTier,
  loadKeys,
  revokeKey,
  setSetting,
  setSettingIfAbsent,
  type CreateKeyOptions,
  type KeyRow,
  type Tier,
} from './keys.js';
export {
  consumeToken,
  countTokenRequests,
  findAccount,
  loadAccounts,
  loadCurrentUsage,
  markClaimed,
  recordToken,
  meteredSince,
  saveMeter,
  setPaymentIds,
  type AccountRow,
  type Balance,
  type AccountUpdate,
  type KeyTouch,
  type TokenPurpose,
  type UsageRow,
} from './accounts.js';
