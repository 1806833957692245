// Production: Premium Service Bus behind a private endpoint, General Purpose PostgreSQL with
// zone-redundant high availability, ten workers at most, the target tenant by certificate.
using 'main.bicep'

param environmentName = readEnvironmentVariable('AZURE_ENV_NAME', 'matoolkit-prod')
param location = readEnvironmentVariable('AZURE_LOCATION', 'westeurope')
param principalId = readEnvironmentVariable('AZURE_PRINCIPAL_ID', '')
param principalName = readEnvironmentVariable('MATOOLKIT_DEPLOYER_NAME', '')
param principalType = readEnvironmentVariable('MATOOLKIT_DEPLOYER_TYPE', 'Group')
param adminApiClientId = readEnvironmentVariable('MATOOLKIT_ADMIN_API_CLIENT_ID', '')
param serviceBusSku = 'Premium'
param postgresSkuName = 'Standard_D2ds_v5'
param postgresSkuTier = 'GeneralPurpose'
param postgresHighAvailability = true
param workerMaxReplicas = 10
param tenantMode = 'entra'
param targetTenantId = readEnvironmentVariable('MATOOLKIT_TENANT_ID', '')
param targetClientId = readEnvironmentVariable('MATOOLKIT_CLIENT_ID', '')
param targetCertificateName = 'matoolkit-worker'
param logLevel = 'info'
