// Vitest global set-up: one PostgreSQL for the whole run and a migrated template database.
import type { TestProject } from 'vitest/node';
import pg from 'pg';
import { Kysely, PostgresDialect } from 'kysely';
import { startCluster, withDatabase, type Cluster } from './postgres.js';
import { migrateToLatest } from '../../src/db/migrate.js';

export const TEMPLATE_DATABASE = 'backoffice_template';

let cluster: Cluster | undefined;

export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) {
    cluster = await startCluster();
    adminUrl = cluster.adminUrl;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE_DATABASE}`);
  await admin.query(`create database ${TEMPLATE_DATABASE}`);
  await admin.end();
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: withDatabase(adminUrl, TEMPLATE_DATABASE), max: 1 }) }) });
  await migrateToLatest(db);
  await db.destroy();
  project.provide('adminDatabaseUrl', adminUrl);
  return () => cluster?.stop();
}

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
  }
}
