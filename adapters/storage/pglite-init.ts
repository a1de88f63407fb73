/** Run by initPgliteDirectory as its own process: creates the PGlite cluster of a new data directory, then exits. */
import { PGlite } from '@electric-sql/pglite';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: pglite-init <data directory>');
const db = await PGlite.create({ dataDir });
await db.close();
