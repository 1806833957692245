#!/bin/sh
# Runs inside the db-roles Container Apps Job (postgres:16-alpine) as the migrate identity, a
# PostgreSQL Entra administrator, from inside the VNet (the server has no public endpoint).
# Idempotent: makes the migrate role the database's owner, creates the services' Entra roles and
# grants each only what its code needs (000 "SQL Database Access"; the worker gets nothing: it
# has no SQL access). Exits non-zero, saying what is missing, when any of it did not take effect:
# PostgreSQL answers a GRANT its issuer may not give with a mere WARNING ("no privileges were
# granted"), so every grant is checked afterwards.
#
# Azure behaviour this relies on (learn.microsoft.com/azure/postgresql/security/):
# - security-entra-concepts, "Limitations and considerations": a database created before any
#   Entra administrator exists is not owned by an Entra principal (it is azuresu's, which no
#   customer role can take it from): modules/postgres.bicep creates it after the administrators;
# - security-entra-concepts: an Entra administrator has the privileges of the server admin, i.e.
#   is a member of azure_pg_admin; security-access-control, "Improved control for azure_pg_admin":
#   members of azure_pg_admin manage objects owned by any non-restricted role (the deployer, the
#   other Entra administrator, may own the database: the migrate role takes it over);
# - security-access-control, "Public schema ownership changes": on Azure the public schema is
#   azure_pg_admin's on every version (plain PostgreSQL 15+: the database owner's), so the
#   migrate role, as owner or member, may create tables there and grant on it;
# - security-manage-entra-users: pgaadauth_create_principal_with_oid(name, object id, type,
#   isAdmin, isMfa) creates the role of an Entra principal, in the postgres database.
#
# Variables: PGHOST, PGDATABASE, PGUSER (the migrate identity's name), MIGRATE_CLIENT_ID,
# APP_ROLES (role:objectId,...), DAPR_STATE_ROLE (role:objectId). The tests
# (deploy/aca/db-roles.test.ts) run it against a local PostgreSQL without a managed identity:
# then libpq's own settings authenticate, PGAADAUTH_DATABASE names the database holding a
# stand-in of pgaadauth's function, and APP_GROUP_ROLE replaces matoolkit_app.
set -eu
: "${PGDATABASE:?}" "${PGUSER:?}" "${APP_ROLES:?}" "${DAPR_STATE_ROLE:?}"
if [ -n "${IDENTITY_ENDPOINT:-}" ]; then
  token=$(wget -qO- --header "X-IDENTITY-HEADER: ${IDENTITY_HEADER}" \
    "${IDENTITY_ENDPOINT}?api-version=2019-08-01&resource=https://ossrdbms-aad.database.windows.net&client_id=${MIGRATE_CLIENT_ID}" |
    sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
  [ -n "$token" ] || { echo "db-roles: no token for the migrate identity" >&2; exit 1; }
  export PGPASSWORD="$token"
fi
export PGSSLMODE="${PGSSLMODE:-require}"
group="${APP_GROUP_ROLE:-matoolkit_app}"

# The Entra roles, from the database pgaadauth's functions live in.
psql -X -q -v ON_ERROR_STOP=1 -d "${PGAADAUTH_DATABASE:-postgres}" \
  -v app_roles="${APP_ROLES}" -v dapr_role="${DAPR_STATE_ROLE}" <<'SQL'
SELECT pgaadauth_create_principal_with_oid(split_part(r, ':', 1), split_part(r, ':', 2), 'service', false, false)
FROM unnest(string_to_array(:'app_roles' || ',' || :'dapr_role', ',')) AS r
WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = split_part(r, ':', 1));
SQL

# Ownership and grants, in the application's database. psql does not expand its variables inside
# dollar quotes: the DO blocks read them back as settings of this session.
psql -X -q -v ON_ERROR_STOP=1 -d "${PGDATABASE}" \
  -v app_roles="${APP_ROLES}" -v dapr_role="${DAPR_STATE_ROLE}" -v app_group="${group}" <<'SQL'
SELECT set_config('dbroles.app_group', :'app_group', false),
       set_config('dbroles.app_roles', :'app_roles', false),
       set_config('dbroles.dapr_role', split_part(:'dapr_role', ':', 1), false) \g /dev/null

-- The migrate role owns the database: it then may grant on it, and owns its public schema on plain
-- PostgreSQL 15+. A database that is still azuresu's stops everything here, with what to do.
DO $$
DECLARE
  owner text := (SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database());
BEGIN
  IF owner <> current_user THEN
    BEGIN
      EXECUTE format('ALTER DATABASE %I OWNER TO %I', current_database(), current_user);
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE EXCEPTION 'db-roles: database % is owned by %, which % may not take over', current_database(), owner, current_user
        USING HINT = 'It was created before its Entra administrators existed (deploy/aca/modules/postgres.bicep creates it after them now): '
          || 'delete the database (az postgres flexible-server db delete) and run azd provision again.';
    END;
    RAISE NOTICE 'db-roles: % now owns database % (was %)', current_user, current_database(), owner;
  END IF;
END $$;

DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_setting('dbroles.app_group')) THEN
    EXECUTE format('CREATE ROLE %I NOLOGIN', current_setting('dbroles.app_group'));
  END IF;
END $$;
-- The services: read/write the application's tables (created by the migrate role), no DDL at all:
-- the Dapr adapter's dead-letter table is a migration too (0013_bus_dead_letters). REVOKE for a
-- database that an earlier release's script granted CREATE on.
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), :'app_group') \gexec
SELECT format('REVOKE CREATE ON DATABASE %I FROM %I', current_database(), :'app_group') \gexec
SELECT format('GRANT USAGE ON SCHEMA public TO %I', :'app_group') \gexec
-- The tables and sequences the migrate role made (not ON ALL TABLES: the dapr_* tables are the
-- state store's, and the migrate role may not grant on them).
SELECT format(CASE c.relkind WHEN 'S' THEN 'GRANT USAGE, SELECT ON SEQUENCE %s TO %I'
                             ELSE 'GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE %s TO %I' END,
              c.oid::regclass, :'app_group')
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'S') AND c.relowner = current_user::regrole \gexec
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', current_user, :'app_group') \gexec
SELECT format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO %I', current_user, :'app_group') \gexec
SELECT format('GRANT %I TO %I', :'app_group', split_part(r, ':', 1))
FROM unnest(string_to_array(:'app_roles', ',')) AS r \gexec
-- The Dapr state store: its own dapr_* tables only (it creates them), nothing of the app's.
SELECT format('GRANT CONNECT ON DATABASE %I TO %I', current_database(), split_part(:'dapr_role', ':', 1)) \gexec
SELECT format('GRANT USAGE, CREATE ON SCHEMA public TO %I', split_part(:'dapr_role', ':', 1)) \gexec

-- Every grant above, checked: a WARNING instead of a grant must not pass for success. One
-- privilege per call: has_*_privilege with a list answers whether ANY of them is held.
DO $$
DECLARE
  app_group text := current_setting('dbroles.app_group');
  dapr_role text := current_setting('dbroles.dapr_role');
  missing text[] := '{}';
  r text;
  p text;
  t regclass;
BEGIN
  IF NOT has_schema_privilege(current_user, 'public', 'CREATE') THEN
    missing := missing || format('%s (migrations) CREATE on schema public', current_user);
  END IF;
  IF NOT has_database_privilege(app_group, current_database(), 'CONNECT') THEN
    missing := missing || format('%s CONNECT on database %s', app_group, current_database());
  END IF;
  IF NOT has_schema_privilege(app_group, 'public', 'USAGE') THEN
    missing := missing || format('%s USAGE on schema public', app_group);
  END IF;
  FOR t IN SELECT c.oid::regclass FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relowner = current_user::regrole LOOP
    FOREACH p IN ARRAY ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE'] LOOP
      IF NOT has_table_privilege(app_group, t, p) THEN
        missing := missing || format('%s %s on %s', app_group, p, t);
      END IF;
    END LOOP;
  END LOOP;
  FOREACH r IN ARRAY string_to_array(current_setting('dbroles.app_roles'), ',') LOOP
    IF NOT pg_has_role(split_part(r, ':', 1), app_group, 'MEMBER') THEN
      missing := missing || format('%s member of %s', split_part(r, ':', 1), app_group);
    END IF;
  END LOOP;
  IF NOT has_database_privilege(dapr_role, current_database(), 'CONNECT') THEN
    missing := missing || format('%s CONNECT on database %s', dapr_role, current_database());
  END IF;
  FOREACH p IN ARRAY ARRAY['USAGE', 'CREATE'] LOOP
    IF NOT has_schema_privilege(dapr_role, 'public', p) THEN
      missing := missing || format('%s %s on schema public', dapr_role, p);
    END IF;
  END LOOP;
  IF cardinality(missing) > 0 THEN
    RAISE EXCEPTION 'db-roles: not granted: %', array_to_string(missing, '; ');
  END IF;
END $$;
SQL
echo "db-roles: done"
