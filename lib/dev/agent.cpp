// Placeholder: the dev agent is being written.
#include <conclave/dev/agent.hpp>
