mod ping_live;
