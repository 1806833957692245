// One service of the image as a Dapr-enabled container app (deployment contract: the command is
// the first argument). Probes: liveness /healthz, readiness /readyz on the port that serves them
// (the admin API's PORT, else the Dapr app port). Dapr app health on /healthz makes daprd stop
// pulling from Service Bus while the app is unhealthy (deploy/README.md, AKS step 5).
//
// Before the first `azd deploy` an app runs a placeholder image (the first provision has no image
// of ours yet). The placeholder, mcr.microsoft.com/k8se/quickstart, serves one port, 80, and none
// of our paths: with Dapr on, daprd would wait for an app port (3001–3004) that never opens and
// the revision would never be ready; our probes would fail. So a placeholder revision runs without
// Dapr, probes or command, its ingress on the placeholder's port. It is never what azd deploys on:
// azd's deploy copies the running revision and changes only the first container's image
// (Azure/azure-dev, cli/azd/pkg/containerapps/container_app.go, AddRevision), so hooks/migrate.sh
// (predeploy) first provisions every app still on the placeholder with the release image, i.e.
// with Dapr, app health and probes, and the first deployed revision has them all.
param name string
param location string
param tags object
@description('azd service name (azure.yaml): azd finds the app by this tag to deploy its image.')
param serviceName string
param environmentId string
@description('The app\'s own identity (resource id): its code and its pub/sub component use it.')
param identityId string
@description('Identities used by the platform only (ACR pull by the app identity aside): dapr-state, scaler.')
param extraIdentityIds array = []
@description('Of extraIdentityIds, those the container itself must never obtain tokens for.')
param platformOnlyIdentityIds array = []
param registryServer string
param image string
@description('true while the app runs the placeholder image: no Dapr, probes or command, ingress on placeholderPort.')
param placeholder bool
@description('The port the placeholder image listens on.')
param placeholderPort int = 80
param command string
param env array
param daprAppId string
param daprAppPort int
@description('0: no ingress (only the sidecar talks to the app).')
param ingressTargetPort int = 0
param ingressExternal bool = false
param healthPort int
param minReplicas int
param maxReplicas int
param scaleRules array = []
param cpu string = '0.5'
param memory string = '1Gi'

var identities = union([identityId], extraIdentityIds)

resource app 'Microsoft.App/containerApps@2025-02-02-preview' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: toObject(identities, id => id, id => {})
  }
  properties: {
    environmentId: environmentId
    workloadProfileName: 'Consumption'
    configuration: {
      activeRevisionsMode: 'Single'
      registries: [{ server: registryServer, identity: identityId }]
      identitySettings: [for id in platformOnlyIdentityIds: { identity: id, lifecycle: 'None' }]
      ingress: ingressTargetPort == 0 ? null : {
        external: ingressExternal
        targetPort: placeholder ? placeholderPort : ingressTargetPort
        transport: 'http'
        allowInsecure: false
      }
      dapr: {
        enabled: !placeholder
        appId: daprAppId
        appPort: daprAppPort
        appProtocol: 'http'
        appHealth: {
          enabled: true
          path: '/healthz'
          probeIntervalSeconds: 5
          probeTimeoutMilliseconds: 500
          threshold: 3
        }
      }
    }
    template: {
      containers: [
        {
          name: serviceName
          image: image
          args: placeholder ? [] : [command]
          env: env
          resources: { cpu: json(cpu), memory: memory }
          probes: placeholder ? [] : [
            {
              type: 'Liveness'
              httpGet: { path: '/healthz', port: healthPort }
              periodSeconds: 10
              failureThreshold: 3
            }
            {
              type: 'Readiness'
              httpGet: { path: '/readyz', port: healthPort }
              periodSeconds: 5
              failureThreshold: 3
            }
          ]
        }
      ]
      scale: {
        minReplicas: minReplicas
        maxReplicas: maxReplicas
        rules: scaleRules
      }
    }
  }
}

output name string = app.name
output fqdn string = ingressTargetPort == 0 ? '' : app.properties.configuration.ingress.fqdn
