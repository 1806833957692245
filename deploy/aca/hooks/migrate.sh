#!/bin/sh
# azd hooks (azure.yaml). Exits non-zero, and azd stops, when a step fails.
#
# postprovision: the db-roles job (hooks/db-roles.sh: Entra roles and grants), from inside the VNet.
#
# predeploy: the schema migrations of the release being deployed, before any app runs it.
#   1. builds the release image from the root Dockerfile, as azd is about to (the same file,
#      context and platform as azure.yaml's services), and pushes it to the environment's registry;
#   2. points the migrate job (`matoolkit migrate`) at it, starts it and waits for Succeeded;
#   3. first deploy only (an app still runs AZURE_PLACEHOLDER_IMAGE): records that image as every
#      service's SERVICE_<NAME>_IMAGE_NAME and runs `azd provision`, which configures the apps with
#      it: Dapr, app health and probes on (modules/container-app.bicep). azd's deploy then changes
#      only the image of that running configuration (Azure/azure-dev,
#      cli/azd/pkg/containerapps/container_app.go, AddRevision), so the first deployed revision has
#      them all, and no app ever starts on a schema behind its release.
# Not postdeploy: azd's deploy waits for each app's update, which Container Apps fails ("Operation
# expired") when the new revision never gets ready, and a service refuses a schema behind its
# release (MATOOLKIT_MIGRATE_ON_START=false, database.schema_outdated): migrations after the
# deploy would never run.
set -eu
rg="${AZURE_RESOURCE_GROUP:?run through azd, or export the azd environment}"

# azure.yaml's services (deploy/aca/hooks.test.ts checks that the lists agree).
services="admin-api orchestrator scheduler worker"

run_job() {
  job="$1"
  execution=$(az containerapp job start -g "$rg" -n "$job" --query name -o tsv)
  echo "started $job execution $execution"
  while :; do
    status=$(az containerapp job execution show -g "$rg" -n "$job" --job-execution-name "$execution" \
      --query properties.status -o tsv)
    case "$status" in
      Succeeded) echo "$job: succeeded"; return 0 ;;
      Failed|Stopped|Degraded)
        echo "$job: $status; logs: az containerapp job logs show -g $rg -n $job --execution $execution --container $(container_of "$job")" >&2
        return 1 ;;
      *) sleep 10 ;;
    esac
  done
}

# The container of each job (modules/apps.bicep): `migrate`, `db-roles`.
container_of() {
  case "$1" in
    "${MIGRATE_JOB_NAME:-}") echo migrate ;;
    "${DB_ROLES_JOB_NAME:-}") echo db-roles ;;
    *) echo "$1" ;;
  esac
}

release_image() {
  registry="${AZURE_CONTAINER_REGISTRY_ENDPOINT:?}"
  image="${registry}/matoolkit/release-${AZURE_ENV_NAME:?}:predeploy-$(date +%Y%m%d%H%M%S)"
  az acr login --name "${AZURE_CONTAINER_REGISTRY_NAME:?}" >&2
  # linux/amd64: what Container Apps runs, and azd's default build platform (so this build and
  # azd's share Docker's layer cache).
  docker build --platform linux/amd64 -f Dockerfile -t "$image" . >&2
  docker push "$image" >&2
  echo "$image"
}

case "${1:-}" in
  postprovision)
    run_job "${DB_ROLES_JOB_NAME:?}"
    ;;
  predeploy)
    image=$(release_image)
    echo "release image $image"
    az containerapp job update -g "$rg" -n "${MIGRATE_JOB_NAME:?}" --image "$image" -o none
    run_job "$MIGRATE_JOB_NAME"
    placeholder="${AZURE_PLACEHOLDER_IMAGE:?}"
    waiting=$(az containerapp list -g "$rg" \
      --query "[?properties.template.containers[0].image=='${placeholder}'].name" -o tsv)
    if [ -n "$waiting" ]; then
      # shellcheck disable=SC2086 # one word per app name
      echo "first deploy, still on the placeholder:" $waiting"; provisioning the apps with $image"
      for service in $services; do
        azd env set "SERVICE_$(echo "$service" | tr 'a-z-' 'A-Z_')_IMAGE_NAME" "$image" -e "$AZURE_ENV_NAME"
      done
      azd provision --no-prompt -e "$AZURE_ENV_NAME"
    fi
    ;;
  *) echo "usage: migrate.sh postprovision|predeploy" >&2; exit 2 ;;
esac
