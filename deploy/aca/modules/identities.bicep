// Stage 1: one user-assigned managed identity per service (least privilege: each gets only the
// roles its code uses, see the modules that assign them), plus
// - dapr-state: the identity the state store component names (azureClientId), assigned to every
//   app because every sidecar loads matoolkit-state; its PostgreSQL role may only touch the
//   dapr_* tables (deploy/aca/hooks/db-roles.sh);
// - migrate: the migration job's, a PostgreSQL Entra administrator (it owns the schema);
// - scaler: the worker's KEDA rule's; lifecycle None, so the container can never use it.
param name string
param location string
param tags object

var roles = ['admin-api', 'orchestrator', 'scheduler', 'worker', 'dapr-state', 'migrate', 'scaler']

resource identities 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = [
  for role in roles: {
    name: 'id-${name}-${role}'
    location: location
    tags: tags
  }
]

// One entry per identity (a loop output: a lambda may not index the resource collection).
output identities array = [
  for (role, i) in roles: {
    role: role
    id: identities[i].id
    name: identities[i].name
    clientId: identities[i].properties.clientId
    principalId: identities[i].properties.principalId
  }
]
