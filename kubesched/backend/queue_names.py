"""The names of the scheduling queue's parts and of what it queues, as the metrics label them
(``scheduler_pending_pods{queue}``, ``scheduler_queued_entities{queue,type}``)."""

ACTIVE_Q = "active"
BACKOFF_Q = "backoff"
UNSCHEDULABLE_Q = "unschedulable"
GATED_Q = "gated"
#: Pod group members waiting apart: their PodGroup unseen, or their group being scheduled.
INCOMPLETE_Q = "incomplete"
PENDING_Q = "pending"

#: The ``type`` of a queued entity: a pod outside any group, or a pod group.
POD_ENTITY = "pod"
POD_GROUP_ENTITY = "podgroup"
