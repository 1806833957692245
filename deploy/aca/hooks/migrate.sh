#!/bin/sh
# azd hook (azure.yaml): runs the schema migrations once per deploy as the migrate Container Apps
# Job (deployment contract: `matoolkit migrate`), with the image azd just deployed, and waits.
# postprovision: runs db-roles (Entra roles and grants; the first provision has no image yet).
# postdeploy: points the job at the deployed image and runs it. Services run with
# MATOOLKIT_MIGRATE_ON_START=false: a new revision whose schema is behind refuses to start
# (database.schema_outdated) and is restarted by Container Apps until this job has finished,
# while the previous revision keeps serving.
set -eu
rg="${AZURE_RESOURCE_GROUP:?run through azd, or export the azd environment}"

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
        echo "$job: $status; logs: az containerapp job logs show -g $rg -n $job --execution $execution --container $job" >&2
        return 1 ;;
      *) sleep 10 ;;
    esac
  done
}

case "${1:-postdeploy}" in
  postprovision)
    run_job "${DB_ROLES_JOB_NAME:?}"
    ;;
  postdeploy)
    image="${SERVICE_ADMIN_API_IMAGE_NAME:-}"
    if [ -z "$image" ]; then
      image=$(az containerapp show -g "$rg" -n "${ADMIN_API_APP_NAME:?}" \
        --query 'properties.template.containers[0].image' -o tsv)
    fi
    az containerapp job update -g "$rg" -n "${MIGRATE_JOB_NAME:?}" --image "$image" -o none
    run_job "$MIGRATE_JOB_NAME"
    ;;
  *) echo "usage: migrate.sh postprovision|postdeploy" >&2; exit 2 ;;
esac
