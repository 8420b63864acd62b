-- Schema version 6 to 7, frozen once released: presence events are no longer kept. A migration test fixture.
DROP TABLE room_events;
