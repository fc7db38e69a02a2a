/**
 * Fresh zero ADS request messages as literals: what protobuf-es's create() makes for the two request
 * schemas, without its reflective walk over the schema's fields. A stream parses one request per
 * response it sent (each ACK), so the transport parses into these (mergeFromBinary of a zero
 * message is fromBinary). test/unit/xds/zero-requests.test.ts holds them equal to create()'s.
 */
import {
  type DeltaDiscoveryRequest,
  DeltaDiscoveryRequestSchema,
  type DiscoveryRequest,
  DiscoveryRequestSchema,
} from "../gen/envoy/service/discovery/v3/discovery_pb.ts";

const deltaTypeName = DeltaDiscoveryRequestSchema.typeName;
const sotwTypeName = DiscoveryRequestSchema.typeName;

/** A new DeltaDiscoveryRequest with every field at its zero value (create(DeltaDiscoveryRequestSchema)). */
export function zeroDeltaRequest(): DeltaDiscoveryRequest {
  return {
    $typeName: deltaTypeName,
    typeUrl: "",
    resourceNamesSubscribe: [],
    resourceNamesUnsubscribe: [],
    resourceLocatorsSubscribe: [],
    resourceLocatorsUnsubscribe: [],
    initialResourceVersions: {},
    responseNonce: "",
  };
}

/** A new DiscoveryRequest with every field at its zero value (create(DiscoveryRequestSchema)). */
export function zeroSotwRequest(): DiscoveryRequest {
  return {
    $typeName: sotwTypeName,
    versionInfo: "",
    resourceNames: [],
    resourceLocators: [],
    typeUrl: "",
    responseNonce: "",
  };
}
