#!/bin/sh
# Runs inside the db-roles Container Apps Job (postgres:16-alpine) as the migrate identity, a
# PostgreSQL Entra administrator, from inside the VNet (the server has no public endpoint).
# Idempotent: creates the services' Entra roles and grants each only what its code needs
# (000 "SQL Database Access"; the worker gets nothing: it has no SQL access).
set -eu
token=$(wget -qO- --header "X-IDENTITY-HEADER: ${IDENTITY_HEADER}" \
  "${IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=https://ossrdbms-aad.database.windows.net&client_id=${MIGRATE_CLIENT_ID}" |
  sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
[ -n "$token" ] || { echo "db-roles: no token for the migrate identity" >&2; exit 1; }
export PGPASSWORD="$token" PGSSLMODE=require
# Roles are created from the postgres database (pgaadauth lives there), grants in the app's.
psql -v ON_ERROR_STOP=1 -d postgres \
  -v app_roles="${APP_ROLES}" -v dapr_role="${DAPR_STATE_ROLE}" <<'SQL'
SELECT pgaadauth_create_principal_with_oid(split_part(r, ':', 1), split_part(r, ':', 2), 'service', false, false)
FROM unnest(string_to_array(:'app_roles' || ',' || :'dapr_role', ',')) AS r
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = split_part(r, ':', 1));
SQL
psql -v ON_ERROR_STOP=1 -d "${PGDATABASE}" \
  -v app_roles="${APP_ROLES}" -v dapr_role="${DAPR_STATE_ROLE}" -v owner="${PGUSER}" <<'SQL'
DO $$ BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'matoolkit_app') THEN
    CREATE ROLE matoolkit_app NOLOGIN;
  END IF;
END $$;
-- The services: read/write the application's tables (created by the migrate role), and CREATE
-- on the database for the dead-letter schema matoolkit_dapr that the Dapr adapter creates.
SELECT format('GRANT CONNECT, CREATE ON DATABASE %I TO matoolkit_app', current_database()) \gexec
GRANT USAGE ON SCHEMA public TO matoolkit_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO matoolkit_app;
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO matoolkit_app;
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO matoolkit_app', :'owner') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO matoolkit_app', :'owner') \gexec
SELECT format('GRANT matoolkit_app TO %I', split_part(r, ':', 1))
FROM unnest(string_to_array(:'app_roles', ',')) AS r \gexec
-- The Dapr state store: its own dapr_* tables only (it creates them), nothing of the app's.
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), split_part(:'dapr_role', ':', 1)) \gexec
SELECT format('GRANT USAGE, CREATE ON SCHEMA public TO %I', split_part(:'dapr_role', ':', 1)) \gexec
SQL
echo "db-roles: done"
