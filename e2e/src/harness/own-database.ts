import pg from 'pg';

/** The local PostgreSQL server the tests create their databases on. */
export const SERVER_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs `work` on a connection to the server's maintenance database. */
export const withServer = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
};

/**
 * A database of its own on the local server, for one cluster or one test file: a run never sees another's rows,
 * and `drop` leaves nothing behind on the machine.
 */
export class OwnDatabase {
  private constructor(
    /** A name made of letters, digits and `_` only: it is written into the statements as it is. */
    readonly name: string,
    readonly url: string,
  ) {}

  static async create(name: string): Promise<OwnDatabase> {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new RangeError(`not a plain database name: ${name}`);
    await withServer((client) => client.query(`CREATE DATABASE ${name}`));
    const url = new URL(SERVER_URL);
    url.pathname = `/${name}`;
    return new OwnDatabase(name, url.toString());
  }

  async drop(): Promise<void> {
    await withServer((client) => client.query(`DROP DATABASE IF EXISTS ${this.name} WITH (FORCE)`));
  }
}
