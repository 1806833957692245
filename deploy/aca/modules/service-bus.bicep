// Stage 1: the Service Bus namespace, its topics and subscriptions (000 "Service Bus
// Architecture") and each identity's data-plane roles, scoped to the topic or subscription it
// uses. Dapr's pub/sub is the client: subscription names are the Dapr consumer ids, i.e. the app
// ids (matoolkit-orchestrator, matoolkit-worker), not 000's "orchestrator" / "worker-{id}"; every
// consumed topic has a "<topic>-deadletter" twin that Dapr forwards undeliverable messages to and
// that the orchestrator reads back (libs/runtime/src/dapr/dead-letter-intake.ts). The components
// run with disableEntityManagement "true": everything is created here, so no identity needs
// Manage rights except the KEDA scaler's (reading a subscription's message count needs them).
param name string
param location string
param tags object
@description('Premium is required for private endpoints (and gives isolation); Standard has a public endpoint, still Entra-only (local auth disabled).')
@allowed(['Standard', 'Premium'])
param sku string
param privateEndpointsSubnetId string
param privateDnsZoneId string
@description('WorkerId of the worker pool: its subscription keeps only its own jobs (000: SQL filter WorkerId = \'{workerId}\').')
param workerId string
@description('principalId per identity: admin-api, orchestrator, scheduler, worker, scaler.')
param principalIds object

var roleIds = {
  sender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39' // Azure Service Bus Data Sender
  receiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0' // Azure Service Bus Data Receiver
  owner: '090c5cfd-751d-490a-894a-3ce6f1109419' // Azure Service Bus Data Owner (KEDA scaler only)
}

// libs/domain/src/messages/topics.ts, and the dead-letter twin of each (deadLetterTopicOf).
var baseTopics = ['orchestrator-events', 'worker-jobs', 'worker-results', 'notifications']
var topicNames = concat(baseTopics, map(baseTopics, t => '${t}-deadletter'))

var orchestratorAppId = 'matoolkit-orchestrator'
var workerAppId = 'matoolkit-worker'

// Who consumes what: the orchestrator's programmatic subscriptions (orchestrator-service.ts,
// notifier.ts), its dead-letter intake of every topic it consumes plus the worker's
// (adoptWorkerJobDeadLetters), and the worker pool's filtered subscription.
var subscriptions = [
  { topic: 'orchestrator-events', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'worker-results', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'notifications', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'orchestrator-events-deadletter', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'worker-results-deadletter', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'notifications-deadletter', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'worker-jobs-deadletter', name: orchestratorAppId, consumer: 'orchestrator', filter: '' }
  { topic: 'worker-jobs', name: workerAppId, consumer: 'worker', filter: 'WorkerId = \'${workerId}\'' }
]

// Senders (per identity, per topic). The outbox table is shared and every relay (admin API, scheduler, orchestrator)
// publishes whichever rows it locks, so each of them may publish to any outbox topic; the
// orchestrator also publishes its delayed retries and forwards its own dead letters; the worker
// publishes results and forwards its dead letters.
var topicGrants = [
  { who: 'admin-api', role: 'sender', topic: 'orchestrator-events' }
  { who: 'admin-api', role: 'sender', topic: 'worker-jobs' }
  { who: 'admin-api', role: 'sender', topic: 'notifications' }
  { who: 'scheduler', role: 'sender', topic: 'orchestrator-events' }
  { who: 'scheduler', role: 'sender', topic: 'worker-jobs' }
  { who: 'scheduler', role: 'sender', topic: 'notifications' }
  { who: 'orchestrator', role: 'sender', topic: 'orchestrator-events' }
  { who: 'orchestrator', role: 'sender', topic: 'worker-jobs' }
  { who: 'orchestrator', role: 'sender', topic: 'notifications' }
  { who: 'orchestrator', role: 'sender', topic: 'orchestrator-events-deadletter' }
  { who: 'orchestrator', role: 'sender', topic: 'worker-results-deadletter' }
  { who: 'orchestrator', role: 'sender', topic: 'notifications-deadletter' }
  { who: 'worker', role: 'sender', topic: 'worker-results' }
  { who: 'worker', role: 'sender', topic: 'worker-jobs-deadletter' }
  { who: 'scaler', role: 'owner', topic: 'worker-jobs' }
]
// Receivers, on their own subscription only.
var subscriptionGrants = map(subscriptions, s => {
  who: s.consumer
  role: 'receiver'
  topic: s.topic
  subscription: s.name
})

resource namespace 'Microsoft.ServiceBus/namespaces@2022-10-01-preview' = {
  name: 'sb-${name}-${uniqueString(resourceGroup().id)}'
  location: location
  tags: tags
  sku: { name: sku, tier: sku, capacity: sku == 'Premium' ? 1 : null }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: sku == 'Premium' ? 'Disabled' : 'Enabled'
  }
}

// 000 "Topics": 10-minute duplicate detection, 7-day TTL, 1024 MB, no partitioning.
resource topics 'Microsoft.ServiceBus/namespaces/topics@2022-10-01-preview' = [
  for topic in topicNames: {
    parent: namespace
    name: topic
    properties: {
      requiresDuplicateDetection: true
      duplicateDetectionHistoryTimeWindow: 'PT10M'
      defaultMessageTimeToLive: 'P7D'
      maxSizeInMegabytes: 1024
      enablePartitioning: false
    }
  }
]

// 000 "Subscriptions": max delivery 10, lock 1 minute, TTL 14 days, dead-lettering on expiration.
resource subs 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2022-10-01-preview' = [
  for s in subscriptions: {
    name: '${namespace.name}/${s.topic}/${s.name}'
    properties: {
      maxDeliveryCount: 10
      lockDuration: 'PT1M'
      defaultMessageTimeToLive: 'P14D'
      deadLetteringOnMessageExpiration: true
    }
    dependsOn: [topics]
  }
]

// A subscription made through ARM gets a $Default rule that accepts everything; redefining
// $Default with the SQL filter keeps only this pool's jobs (Dapr publishes WorkerId as an
// application property: publishMetadata in cloud-event-delivery.ts).
resource filters 'Microsoft.ServiceBus/namespaces/topics/subscriptions/rules@2022-10-01-preview' = [
  for (s, i) in subscriptions: if (s.filter != '') {
    name: '${namespace.name}/${s.topic}/${s.name}/$Default'
    properties: {
      filterType: 'SqlFilter'
      sqlFilter: { sqlExpression: s.filter }
    }
    dependsOn: [subs[i]]
  }
]

resource grantTopics 'Microsoft.ServiceBus/namespaces/topics@2022-10-01-preview' existing = [
  for g in topicGrants: {
    parent: namespace
    name: g.topic
  }
]

resource topicRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (g, i) in topicGrants: {
    scope: grantTopics[i]
    name: guid(namespace.id, g.topic, principalIds[g.who], roleIds[g.role])
    properties: {
      principalId: principalIds[g.who]
      principalType: 'ServicePrincipal'
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds[g.role])
    }
    dependsOn: [topics]
  }
]

resource grantSubscriptions 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2022-10-01-preview' existing = [
  for g in subscriptionGrants: {
    name: '${namespace.name}/${g.topic}/${g.subscription}'
  }
]

resource subscriptionRoles 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for (g, i) in subscriptionGrants: {
    scope: grantSubscriptions[i]
    name: guid(namespace.id, g.topic, g.subscription, principalIds[g.who], roleIds[g.role])
    properties: {
      principalId: principalIds[g.who]
      principalType: 'ServicePrincipal'
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds[g.role])
    }
    dependsOn: [subs]
  }
]

module endpoint 'private-endpoint.bicep' = if (sku == 'Premium') {
  name: 'pe-sb'
  params: {
    name: 'pe-${namespace.name}'
    location: location
    tags: tags
    subnetId: privateEndpointsSubnetId
    targetResourceId: namespace.id
    groupId: 'namespace'
    privateDnsZoneId: privateDnsZoneId
  }
}

output name string = namespace.name
output fqdn string = '${namespace.name}.servicebus.windows.net'
output workerSubscription string = workerAppId
