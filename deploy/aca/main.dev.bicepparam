// Development: Standard Service Bus (no private endpoint; still Entra-only), Burstable PostgreSQL,
// two workers at most. azd fills the readEnvironmentVariable values from the azd environment.
using 'main.bicep'

param environmentName = readEnvironmentVariable('AZURE_ENV_NAME', 'matoolkit-dev')
param location = readEnvironmentVariable('AZURE_LOCATION', 'westeurope')
param principalId = readEnvironmentVariable('AZURE_PRINCIPAL_ID', '')
param principalName = readEnvironmentVariable('MATOOLKIT_DEPLOYER_NAME', '')
param adminApiClientId = readEnvironmentVariable('MATOOLKIT_ADMIN_API_CLIENT_ID', '')
param serviceBusSku = 'Standard'
param postgresSkuName = 'Standard_B1ms'
param postgresSkuTier = 'Burstable'
param workerMaxReplicas = 2
param tenantMode = readEnvironmentVariable('MATOOLKIT_TENANT', 'none')
param targetTenantId = readEnvironmentVariable('MATOOLKIT_TENANT_ID', '')
param targetClientId = readEnvironmentVariable('MATOOLKIT_CLIENT_ID', '')
param logLevel = 'debug'
